// Hand-written predicates for the filters of filters.txt, over rows in row form (docs/backends.md): decimals as exact
// text, instants as ISO text with any offset, dates as YYYY-MM-DD. A null operand makes a comparison false, as in
// OData. `odata-engine bench` checks that each keeps the same rows as the memory backend before timing it.
const decimal = (text) => (text === null ? null : Number(text));

export default {
  "Status eq 'Open' and QuantityReceived lt QuantityOrdered": (row) =>
    row.Status === 'Open' &&
    row.QuantityReceived !== null &&
    decimal(row.QuantityReceived) < decimal(row.QuantityOrdered),
  'UnitPrice gt 100': (row) => decimal(row.UnitPrice) > 100,
  "contains(Description,'a')": (row) => row.Description.includes('a'),
  'DueDate lt 2024-03-01 and IsTaxable': (row) =>
    row.DueDate !== null && row.DueDate < '2024-03-01' && row.IsTaxable === true,
  'CreatedDate ge 2024-01-01T00:00:00Z': (row) => Date.parse(row.CreatedDate) >= Date.UTC(2024, 0, 1),
  "Account in ('a','A','b_')": (row) => row.Account === 'a' || row.Account === 'A' || row.Account === 'b_',
  'QuantityOrdered mul UnitPrice gt 1000': (row) => decimal(row.QuantityOrdered) * decimal(row.UnitPrice) > 1000,
  "tolower(UnitOfMeasure) eq 'a'": (row) => row.UnitOfMeasure.toLowerCase() === 'a',
};
