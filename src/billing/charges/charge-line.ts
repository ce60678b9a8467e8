import type { InvoiceLine } from '../invoices/invoice.entity';
import type { Charge } from './charge.entity';

/** A pending charge as the invoice line that carries it. */
export function chargeLine(charge: Charge): InvoiceLine {
  return {
    description: charge.description,
    quantity: charge.quantity,
    unit_amount: charge.unitAmount,
    amount: charge.amount,
    charge_id: charge.id,
    ...(charge.serviceId ? { service_id: charge.serviceId } : {}),
    ...(charge.periodStart ? { period_start: charge.periodStart, period_end: charge.periodEnd! } : {}),
  };
}

/**
 * The pending charges an invoice of `total` (before them) takes: all of them, unless their credits would take it
 * below zero; then only those that add to it (the credits wait for an invoice they fit on, or the next bill run).
 */
export function chargesFitting(charges: Charge[], total: number): Charge[] {
  const all = charges.reduce((sum, charge) => sum + charge.amount, total);
  return all >= 0 ? charges : charges.filter((charge) => charge.amount >= 0);
}
