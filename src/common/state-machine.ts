import { ApiError } from './errors/api-error';

/** A lifecycle as data: for each state, the states it may move to. Anything not listed is refused. */
export type Transitions<S extends string> = Readonly<Record<S, readonly S[]>>;

export function canTransition<S extends string>(table: Transitions<S>, from: S, to: S): boolean {
  return table[from].includes(to);
}

/**
 * Returns `to` when `table` allows the move, else throws 409 invalid_state_transition on `status`, naming both states
 * and what `from` allows (`record` names the kind: "a subscriber", "a ticket").
 */
export function assertTransition<S extends string>(table: Transitions<S>, record: string, from: S, to: S): S {
  if (!canTransition(table, from, to)) {
    const allowed = table[from];
    throw new ApiError(
      'invalid_state_transition',
      `${record[0].toUpperCase()}${record.slice(1)} cannot move from ${from} to ${to}.` +
        (allowed.length ? ` Allowed from ${from}: ${allowed.join(', ')}.` : ` ${from} is final.`),
      'status',
    );
  }
  return to;
}
