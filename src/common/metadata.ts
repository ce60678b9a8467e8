/** Free-form key/value data a client attaches to a record (subscribers, transactions); its limits are in is-metadata. */
export type Metadata = Record<string, string | number | boolean | null>;
