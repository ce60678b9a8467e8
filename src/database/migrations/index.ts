import { Foundation1795235342641 } from './1795235342641-Foundation';
import { SubscribersBillingProfilesIdempotency1795235750197 } from './1795235750197-SubscribersBillingProfilesIdempotency';

/** Every migration, in order. A new migration file is added here too. */
export const MIGRATIONS = [Foundation1795235342641, SubscribersBillingProfilesIdempotency1795235750197];
