import { Clock } from '../../src/common/clock';

/** A clock the tests set and advance; it stands still in between. The app reads it through Clock (createApp's `clock`). */
export class TestClock extends Clock {
  private at: number;

  constructor(start: string | Date = new Date()) {
    super();
    this.at = new Date(start).getTime();
  }

  protected override systemNow(): Date {
    return new Date(this.at);
  }

  set(at: string | Date): void {
    this.at = new Date(at).getTime();
  }

  advance(ms: number): void {
    this.at += ms;
  }
}
