import { EventRecord } from '../events/event.entity';
import { ApiToken } from '../gateway/tokens/api-token.entity';
import { Tenant } from '../gateway/tenants/tenant.entity';

/** Every entity of the service, in one list for the DataSource and the migration drift check. */
export const ENTITIES = [Tenant, ApiToken, EventRecord];
