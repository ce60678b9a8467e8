/** What the RADIUS repository reads and writes of FreeRADIUS's tables (src/provisioning/radius.repository.ts). */

/** One attribute row of radcheck or radreply. */
export interface RadiusAttribute {
  attribute: string;
  op: string;
  value: string;
}

/** What FreeRADIUS should know of one username: nothing (absent), or its check and reply items and groups. */
export interface RadiusUser {
  check: RadiusAttribute[];
  reply: RadiusAttribute[];
  groups: string[];
}

/** A client of FreeRADIUS in its `nas` table (keyed by address); `null` removes it. */
export interface RadiusClient {
  shortname: string;
  type: string;
  secret: string;
  description: string;
}

/** One accounting session of radacct, as the API reads it. */
export interface RadiusSession {
  radacctId: string;
  acctSessionId: string;
  username: string;
  nasIp: string;
  framedIp: string | null;
  startedAt: Date | null;
  updatedAt: Date | null;
  stoppedAt: Date | null;
  sessionTimeS: number | null;
  bytesIn: number;
  bytesOut: number;
  terminateCause: string | null;
}

/** Which of a username's sessions belong to one service: those started while it existed (usernames are reused). */
export interface SessionWindow {
  username: string;
  from: Date;
  until: Date | null;
}
