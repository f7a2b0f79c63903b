/** The invoice schema the field-level tests write their benchmarks with (a total, a due date, line items). */
export const INVOICE_SCHEMA = {
  type: 'object',
  properties: {
    total: { type: 'number' },
    due_date: { type: 'string' },
    line_items: {
      type: 'array',
      items: {
        type: 'object',
        properties: { sku: { type: 'string' }, amount: { type: 'number' } },
        required: ['sku', 'amount'],
      },
    },
  },
  required: ['total', 'due_date', 'line_items'],
};
