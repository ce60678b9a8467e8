import { phoneDigits, toE164 } from './phone';

describe('toE164', () => {
  it.each([
    ['+14155550123', '+14155550123'],
    ['+1 (415) 555-0123', '+14155550123'],
    ['0044 20 7946 0000', '+442079460000'],
    ['+351.21.000.0000', '+351210000000'],
  ])('should read %p as %p', (text, e164) => {
    expect(toE164(text)).toBe(e164);
  });

  it.each(['4155550123', '020 7946 0000', '+0123456', '+1234567890123456', 'ada', '+1 415 ext 5'])(
    'should refuse %p, which is no international number',
    (text) => {
      expect(toE164(text)).toBeNull();
    },
  );
});

describe('phoneDigits', () => {
  it.each([
    ['(415) 555-0123', '4155550123'],
    ['+1 415 555 0123', '14155550123'],
    ['0044 20 7946', '44207946'],
    ['020 7946 0000', '2079460000'],
    ['555', '555'],
  ])('should find %p as the digits %p', (text, digits) => {
    expect(phoneDigits(text)).toBe(digits);
  });

  it.each(['12', 'ada 555', '555-ABC', '+'])('should not read %p as a phone number', (text) => {
    expect(phoneDigits(text)).toBeNull();
  });
});
