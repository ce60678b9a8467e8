import { utcDay } from '../common/clock';
import { addDays } from '../common/dates';

/**
 * The instants an advance from `from` to `to` stops at, in order: `from` itself (what is due then is done, again if
 * an advance taken up after a crash had begun it: every step's work is once-only), each day's bill run hour after
 * it and before `to`, and `to`.
 */
export function advanceSteps(from: Date, to: Date, runHourUtc: number): Date[] {
  const steps = [from];
  for (let day = utcDay(from); ; day = addDays(day, 1)) {
    const at = new Date(`${day}T${String(runHourUtc).padStart(2, '0')}:00:00.000Z`);
    if (at.getTime() >= to.getTime()) {
      break;
    }
    if (at.getTime() > from.getTime()) {
      steps.push(at);
    }
  }
  if (to.getTime() > from.getTime()) {
    steps.push(to);
  }
  return steps;
}

/** Whether the scheduler would have started the day's bill run by `at` (its hour has come). */
export function billsDayAt(at: Date, runHourUtc: number): boolean {
  return at.getUTCHours() >= runHourUtc;
}
