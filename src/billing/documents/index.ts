/** PDF documents of billing (issue 29): invoices, credit notes, statements; view models in document-model.ts. */
export * from './document-model';
export {
  buildCreditNotePdf,
  buildInvoicePdf,
  buildStatementPdf,
  renderCreditNotePdf,
  renderInvoicePdf,
  renderStatementPdf,
  streamCreditNotePdf,
  streamInvoicePdf,
  streamStatementPdf,
} from './documents';
export {
  currencyExponent,
  formatDocumentDate,
  formatMoney,
  formatPercentage,
  formatQuantity,
} from '../../common/intl-format';
export { pdfEtag } from './pdf-canvas';
