import dns from 'node:dns';

type LookupCallback = (error: Error | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * Makes the callback `dns.lookup` answer `answers[host]` for the names given (every other name is looked up for
 * real): what a connection resolves its host with as it connects (the webhook sender, and the mail sender's
 * src/notifications/mail/guarded-socket.ts). The registration checks use `dns.promises.lookup`, faked by
 * fakeRegistrationDns (test/support/webhook-receiver.ts). Undone by jest.restoreAllMocks().
 */
export function fakeConnectDns(answers: Record<string, string[]>): jest.SpyInstance {
  const real = dns.lookup.bind(dns) as (host: string, options: dns.LookupOptions, cb: LookupCallback) => void;
  return jest.spyOn(dns, 'lookup').mockImplementation(((
    hostname: string,
    options: dns.LookupOptions,
    callback: LookupCallback,
  ) => {
    const answer = answers[hostname];
    if (answer === undefined) {
      return real(hostname, options, callback);
    }
    const list = answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    process.nextTick(() =>
      options.all ? callback(null, list) : callback(null, list[0].address, list[0].family),
    );
  }) as unknown as typeof dns.lookup);
}
