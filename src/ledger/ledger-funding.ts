/**
 * A funding payment the venue booked on a position (perpetual futures), keyed by the venue's id:
 * positive when the account received it, negative when it paid, in the account currency.
 */
export interface LedgerFunding {
  venueFundingId: string;
  symbol: string;
  amount: number;
  currency: string;
  at: string;
}
