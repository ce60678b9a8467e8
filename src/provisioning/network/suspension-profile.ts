import type { RadiusGroup } from '../radius.repository';

/** What a suspended service's login gets (a tenant's network settings, docs/network.md). */
export const SUSPENSION_MODES = ['reject', 'walled_garden'] as const;
export type SuspensionMode = (typeof SUSPENSION_MODES)[number];

/** The walled garden's defaults: the MikroTik address list and the Filter-Id a NAS maps to its redirect. */
export const DEFAULT_WALLED_GARDEN_ADDRESS_LIST = 'suspended';
export const DEFAULT_WALLED_GARDEN_FILTER_ID = 'walled-garden';

/** A tenant's suspension mode and its walled garden, as the driver writes them into the tenant's suspended group. */
export interface SuspensionProfile {
  mode: SuspensionMode;
  /** https; required in walled_garden mode. */
  paymentPageUrl: string | null;
  addressList: string;
  filterId: string;
}

/** A tenant that never changed its network settings: suspended logins are rejected. */
export const DEFAULT_SUSPENSION_PROFILE: SuspensionProfile = {
  mode: 'reject',
  paymentPageUrl: null,
  addressList: DEFAULT_WALLED_GARDEN_ADDRESS_LIST,
  filterId: DEFAULT_WALLED_GARDEN_FILTER_ID,
};

/**
 * The rows of a tenant's suspended group (`suspended:<slug>`) under its profile. `reject`: the check item
 * `Auth-Type := Reject` and the message the NAS may log. `walled_garden`: no check item, so the password decides and
 * the login is accepted, with the restricted profile as reply items: the MikroTik address list the NAS's firewall
 * redirects, the Filter-Id the NAS maps to its walled-garden filter, and the payment page as WISPr-Redirection-URL
 * (for NASes that redirect by it).
 */
export function suspendedGroupRows(profile: SuspensionProfile): RadiusGroup {
  if (profile.mode === 'reject') {
    return {
      check: [{ attribute: 'Auth-Type', op: ':=', value: 'Reject' }],
      reply: [{ attribute: 'Reply-Message', op: ':=', value: 'Service suspended' }],
    };
  }
  return {
    check: [],
    reply: [
      { attribute: 'Mikrotik-Address-List', op: ':=', value: profile.addressList },
      { attribute: 'Filter-Id', op: ':=', value: profile.filterId },
      ...(profile.paymentPageUrl
        ? [{ attribute: 'WISPr-Redirection-URL', op: ':=', value: profile.paymentPageUrl }]
        : []),
    ],
  };
}

/** A tenant's stored network settings, as far as the profile goes (NetworkSettings). */
interface StoredSettings {
  suspensionMode: string;
  paymentPageUrl: string | null;
  walledGardenAddressList: string;
  walledGardenFilterId: string;
}

/** The suspension profile the network carries out for a tenant's settings (none: the defaults). */
export function profileOf(settings: StoredSettings | null): SuspensionProfile {
  if (!settings) {
    return { ...DEFAULT_SUSPENSION_PROFILE };
  }
  return {
    mode: settings.suspensionMode as SuspensionMode,
    paymentPageUrl: settings.paymentPageUrl,
    addressList: settings.walledGardenAddressList,
    filterId: settings.walledGardenFilterId,
  };
}
