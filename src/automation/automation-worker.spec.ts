import { failedOrderTicket, REACTIONS } from './automation-worker';

describe('which rules react to which event', () => {
  it("should hand a subscriber's status change to the services that follow it and to the reconnection fee", () => {
    expect(REACTIONS['subscriber.status_changed']).toEqual([
      'service_follows_subscriber',
      'reconnection_fee',
    ]);
  });

  it('should bring services in line when an order ends, and open a ticket when it fails', () => {
    expect(REACTIONS['provisioning_order.completed']).toEqual(['service_follows_subscriber']);
    expect(REACTIONS['provisioning_order.cancelled']).toEqual(['service_follows_subscriber']);
    expect(REACTIONS['provisioning_order.failed']).toEqual([
      'service_follows_subscriber',
      'failed_provisioning',
    ]);
  });

  it('should look for a paid-up subscriber after every kind of money or invoice settlement', () => {
    for (const type of [
      'transaction.allocated',
      'transaction.created',
      'invoice.paid',
      'invoice.voided',
      'invoice.written_off',
    ]) {
      expect([type, REACTIONS[type]]).toEqual([type, ['paid_up']]);
    }
  });

  it('should react to nothing else: the sweeps and the bill run are no reactions', () => {
    expect(Object.keys(REACTIONS).sort()).toEqual(
      [
        'subscriber.status_changed',
        'provisioning_order.completed',
        'provisioning_order.failed',
        'provisioning_order.cancelled',
        'transaction.allocated',
        'transaction.created',
        'invoice.paid',
        'invoice.voided',
        'invoice.written_off',
      ].sort(),
    );
    expect(REACTIONS['invoice.overdue']).toBeUndefined();
    expect(REACTIONS.schedule).toBeUndefined();
    expect(REACTIONS.billing_run).toBeUndefined();
  });
});

describe('failedOrderTicket', () => {
  const order = { id: 'ord_1', service_id: 'svc_1', action: 'suspend', last_error: 'NAS timeout' };

  it('should open a high-priority incident naming the order, its action and its error', () => {
    expect(failedOrderTicket(order, 'sub_1')).toEqual({
      subject: 'Provisioning failed: suspend of service svc_1',
      description: 'Provisioning order ord_1 (suspend) failed: NAS timeout',
      type: 'incident',
      priority: 'high',
      subscriber_id: 'sub_1',
      tags: ['provisioning'],
      metadata: { provisioning_order_id: 'ord_1', service_id: 'svc_1' },
    });
  });

  it('should make a failed activation an installation ticket, and say when no error was recorded', () => {
    const ticket = failedOrderTicket({ ...order, action: 'activate', last_error: null }, 'sub_1');
    expect(ticket.type).toBe('installation');
    expect(ticket.description).toBe('Provisioning order ord_1 (activate) failed: no error recorded');
  });

  it("should keep the subject and description within a ticket's lengths", () => {
    const ticket = failedOrderTicket(
      { ...order, service_id: 's'.repeat(300), last_error: 'e'.repeat(20_000) },
      'sub_1',
    );
    expect(ticket.subject).toHaveLength(200);
    expect(ticket.subject.startsWith('Provisioning failed: suspend of service sss')).toBe(true);
    expect(ticket.description).toHaveLength(10_000);
  });
});
