import type { EventRecord } from './event.entity';

/**
 * The distinct `data` of the records, each once, and each record's index into them: records whose data is only an
 * `object` share it when the object is the same one (the events of one document, made from one DTO), whatever else
 * differs; any other data is its own.
 */
export function distinctData(records: readonly EventRecord[]): { indexOf: number[]; documents: unknown[] } {
  const documents: unknown[] = [];
  const byObject = new Map<unknown, number>();
  const indexOf = records.map((record) => {
    const data = record.data as Record<string, unknown>;
    const keys = Object.keys(data);
    const shared = keys.length === 1 && keys[0] === 'object' && typeof data.object === 'object';
    if (shared && byObject.has(data.object)) {
      return byObject.get(data.object)!;
    }
    documents.push(data);
    if (shared) {
      byObject.set(data.object, documents.length - 1);
    }
    return documents.length - 1;
  });
  return { indexOf, documents };
}
