import type { PGlite } from '@electric-sql/pglite';

/** A frontend message of one connection, waiting for the single PGlite session. */
interface QueuedMessage {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: unknown) => void;
}

/** ReadyForQuery: 'Z', a length of 5, then the transaction status ('I' idle, 'T' in a block, 'E' failed block). */
const READY_FOR_QUERY = [0x5a, 0, 0, 0, 5];
const READY_FOR_QUERY_LENGTH = READY_FOR_QUERY.length + 1;
const IDLE = 0x49;
/** Sync: ends an extended-protocol batch a connection left open when it went away. */
const SYNC_MESSAGE = new Uint8Array([0x53, 0, 0, 0, 4]);

/** Whether `tail` (the last bytes a message produced) is a ReadyForQuery that leaves the session idle. */
export function endsIdle(tail: Uint8Array): boolean {
  if (tail.length < READY_FOR_QUERY_LENGTH) {
    return false;
  }
  const start = tail.length - READY_FOR_QUERY_LENGTH;
  return READY_FOR_QUERY.every((byte, i) => tail[start + i] === byte) && tail[tail.length - 1] === IDLE;
}

/** The last READY_FOR_QUERY_LENGTH bytes of `tail` followed by `chunk`. */
function keepTail(tail: Uint8Array, chunk: Uint8Array): Uint8Array {
  if (chunk.length >= READY_FOR_QUERY_LENGTH) {
    return chunk.slice(chunk.length - READY_FOR_QUERY_LENGTH);
  }
  const joined = new Uint8Array(tail.length + chunk.length);
  joined.set(tail);
  joined.set(chunk, tail.length);
  return joined.slice(Math.max(0, joined.length - READY_FOR_QUERY_LENGTH));
}

/**
 * The queue pglite-socket's connections share, replacing its own (electric-sql/pglite issue 1046): PGlite is one
 * session, so a connection owns it from its first message until the session is idle again (a ReadyForQuery 'I':
 * after a simple query, after an extended-protocol batch's Sync, after a transaction's end), and the other
 * connections' messages wait. pglite-socket's queue keeps a connection's turn only while a transaction is open, so
 * two connections' Parse/Bind/Execute/Sync batches interleave and one binds the other's unnamed statement (wrong
 * rows, or "portal does not exist"). A message that throws inside PGlite fails that message alone; the queue goes on.
 */
export class EmbeddedExchangeQueue {
  private readonly queue: QueuedMessage[] = [];
  /** The connection whose exchange is open, or null when the session is idle. */
  private owner: number | null = null;
  /** The connection whose message PGlite is running now. */
  private running: number | null = null;
  /** Set when that connection went away while its message ran: the session is released once the message ends. */
  private departed = false;
  private draining = false;

  constructor(private readonly db: PGlite) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject });
      void this.drain();
    });
  }

  getQueueLength(): number {
    return this.queue.length;
  }

  /** The connection went away: its waiting messages are refused. */
  clearQueueForHandler(handlerId: number): void {
    for (let i = this.queue.length - 1; i >= 0; i -= 1) {
      if (this.queue[i].handlerId === handlerId) {
        this.queue.splice(i, 1)[0].reject(new Error('Handler disconnected'));
      }
    }
  }

  /** The connection went away holding the session: its batch is ended and its transaction rolled back. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.running === handlerId) {
      this.departed = true;
    } else if (this.owner === handlerId) {
      await this.release();
      await this.drain();
    }
  }

  /** Ends the owner's batch and transaction, and gives the session to the next connection. */
  private async release(): Promise<void> {
    try {
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(SYNC_MESSAGE, { onRawData: () => undefined }),
      );
      if (this.db.isInTransaction()) {
        await this.db.exec('ROLLBACK'); // exec takes PGlite's lock itself
      }
    } catch {
      // A database that cannot take a Sync is closing; the next message reports it to its own connection.
    }
    this.owner = null;
  }

  /**
   * Puts this queue in place of the one `server` made (a private field: pglite-socket has no option for it), before
   * any connection is accepted. Throws when a pglite-socket upgrade moved the field, so that cannot pass unnoticed.
   */
  static install(server: object, db: PGlite): void {
    const holder = server as { queryQueue?: unknown };
    if (typeof holder.queryQueue !== 'object' || holder.queryQueue === null) {
      throw new Error('pglite-socket no longer keeps its queue in queryQueue: check EmbeddedExchangeQueue');
    }
    holder.queryQueue = new EmbeddedExchangeQueue(db);
  }

  /** The owner's next message, or (idle session) the oldest; undefined while the owner has sent nothing more. */
  private next(): QueuedMessage | undefined {
    const index = this.owner === null ? 0 : this.queue.findIndex((each) => each.handlerId === this.owner);
    return index === -1 ? undefined : this.queue.splice(index, 1)[0];
  }

  private async drain(): Promise<void> {
    if (this.draining) {
      return;
    }
    this.draining = true;
    try {
      for (let item = this.next(); item; item = this.next()) {
        await this.run(item);
      }
    } finally {
      this.draining = false;
    }
  }

  private async run(item: QueuedMessage): Promise<void> {
    let bytes = 0;
    let tail = new Uint8Array(0);
    let failure: { error: unknown } | null = null;
    this.running = item.handlerId;
    try {
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(item.message, {
          onRawData: (chunk: Uint8Array) => {
            bytes += chunk.length;
            tail = keepTail(tail, chunk);
            item.onData(chunk);
          },
        }),
      );
      this.owner = endsIdle(tail) ? null : item.handlerId;
    } catch (error) {
      failure = { error };
      this.owner = this.db.isInTransaction() ? item.handlerId : null;
    } finally {
      this.running = null;
    }
    if (this.departed) {
      this.departed = false;
      await this.release();
    }
    if (failure) {
      item.reject(failure.error);
    } else {
      item.resolve(bytes);
    }
  }
}
