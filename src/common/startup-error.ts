/**
 * An expected reason the process cannot start (port taken, database unreachable, data folder in use): its message is
 * one plain line for the operator, printed without a stack trace.
 */
export class StartupError extends Error {}
