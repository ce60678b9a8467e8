import { endsIdle } from './embedded-exchange-queue';

describe('EmbeddedExchangeQueue', () => {
  describe('endsIdle', () => {
    it('should see an idle ReadyForQuery at the end, and nothing else', () => {
      const ready = (status: string) => Buffer.concat([Buffer.from([0x5a, 0, 0, 0, 5]), Buffer.from(status)]);
      expect(endsIdle(ready('I'))).toBe(true);
      expect(endsIdle(Buffer.concat([Buffer.from('1\0\0\0\x04', 'latin1'), ready('I')]))).toBe(true);
      expect(endsIdle(ready('T'))).toBe(false);
      expect(endsIdle(ready('E'))).toBe(false);
      expect(endsIdle(Buffer.concat([ready('I'), Buffer.from('1\0\0\0\x04', 'latin1')]))).toBe(false);
      expect(endsIdle(Buffer.from('I'))).toBe(false);
    });
  });
});
