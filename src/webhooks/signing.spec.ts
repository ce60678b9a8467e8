import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, SECRET_PREFIX, sign, signatureHeader } from './signing';

const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TIMESTAMP = 1_614_265_330;
const BODY = '{"test": 2432232314}';

describe('webhook signing', () => {
  it('should match the Standard Webhooks reference signature', () => {
    // A known answer: secret, id, timestamp and body given, the one signature the scheme allows.
    expect(sign('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', ID, TIMESTAMP, BODY)).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it("should agree with the Standard Webhooks library's signature for any secret and body", () => {
    for (let i = 0; i < 20; i++) {
      const secret = generateWebhookSecret();
      const body = JSON.stringify({ n: i, text: 'é ✓ \u0000'.repeat(i) });
      expect(sign(secret, `evt_${i}`, TIMESTAMP + i, body)).toBe(
        new Webhook(secret).sign(`evt_${i}`, new Date((TIMESTAMP + i) * 1000), body),
      );
    }
  });

  it('should change the signature with the id, the timestamp, the body or the secret', () => {
    const secret = generateWebhookSecret();
    const base = sign(secret, ID, TIMESTAMP, BODY);
    expect(sign(secret, `${ID}x`, TIMESTAMP, BODY)).not.toBe(base);
    expect(sign(secret, ID, TIMESTAMP + 1, BODY)).not.toBe(base);
    expect(sign(secret, ID, TIMESTAMP, `${BODY} `)).not.toBe(base);
    expect(sign(generateWebhookSecret(), ID, TIMESTAMP, BODY)).not.toBe(base);
  });

  it('should sign with every live secret, so a receiver holding either one verifies during a rotation', () => {
    const [old, fresh] = [generateWebhookSecret(), generateWebhookSecret()];
    const timestamp = Math.floor(Date.now() / 1000);
    const header = signatureHeader([old, fresh], ID, timestamp, BODY);
    expect(header.split(' ')).toEqual([sign(old, ID, timestamp, BODY), sign(fresh, ID, timestamp, BODY)]);
    const headers = { 'webhook-id': ID, 'webhook-timestamp': String(timestamp), 'webhook-signature': header };
    for (const secret of [old, fresh]) {
      expect(new Webhook(secret).verify(BODY, headers)).toEqual({ test: 2432232314 });
    }
    expect(() => new Webhook(generateWebhookSecret()).verify(BODY, headers)).toThrow(
      'No matching signature found',
    );
  });

  it('should make secrets of 24 random bytes behind the whsec_ prefix, never the same twice', () => {
    const secrets = Array.from({ length: 50 }, generateWebhookSecret);
    for (const secret of secrets) {
      expect(secret.startsWith(SECRET_PREFIX)).toBe(true);
      expect(Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')).toHaveLength(24);
    }
    expect(new Set(secrets).size).toBe(secrets.length);
  });
});
