import { readFileSync } from 'node:fs';

/** One subscriber row of data/subscribers.csv; empty cells are absent values. */
export interface Row {
  external_id: string;
  full_name: string;
  email?: string;
  phone?: string;
  status: 'prospect' | 'pending' | 'active' | 'suspended';
  plan: string;
  invoice_amount?: number;
  payment_ref?: string;
  payment_amount?: number;
}

const STATUSES: readonly Row['status'][] = ['prospect', 'pending', 'active', 'suspended'];

/** A deliberately small reader: a header line, comma-separated cells, no quoting (use a CSV library for more). */
export function readRows(path: string): Row[] {
  const [header, ...lines] = readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '');
  const names = (header ?? '').split(',');
  return lines.map((line, index) => {
    const cells = line.split(',');
    const cell = (name: string): string | undefined => {
      const value = cells[names.indexOf(name)]?.trim();
      return value === undefined || value === '' ? undefined : value;
    };
    const required = (name: string): string => {
      const value = cell(name);
      if (value === undefined) {
        throw new Error(`${path}:${index + 2}: ${name} is empty`);
      }
      return value;
    };
    const status = required('status');
    const found = STATUSES.find((known) => known === status);
    if (!found) {
      throw new Error(`${path}:${index + 2}: status ${status} is not one of ${STATUSES.join(', ')}`);
    }
    const amount = (name: string): number | undefined => {
      const value = cell(name);
      if (value === undefined) {
        return undefined;
      }
      if (!/^\d+$/.test(value)) {
        throw new Error(`${path}:${index + 2}: ${name} must be whole minor units (4999 = 49.99)`);
      }
      return Number(value);
    };
    const email = cell('email');
    const phone = cell('phone');
    const paymentRef = cell('payment_ref');
    const invoiceAmount = amount('invoice_amount');
    const paymentAmount = amount('payment_amount');
    return {
      external_id: required('external_id'),
      full_name: required('full_name'),
      status: found,
      plan: required('plan'),
      ...(email === undefined ? {} : { email }),
      ...(phone === undefined ? {} : { phone }),
      ...(invoiceAmount === undefined ? {} : { invoice_amount: invoiceAmount }),
      ...(paymentRef === undefined ? {} : { payment_ref: paymentRef }),
      ...(paymentAmount === undefined ? {} : { payment_amount: paymentAmount }),
    };
  });
}
