/**
 * Where the random-walk feed starts: a mid price and a typical spread per symbol, round
 * figures of the kind the market has shown, not live data. The FX majors are all here so
 * profit in any of their currencies converts to the account currency.
 */
export interface ReferencePrice {
  mid: number;
  spread: number;
  /** Typical move per second, as a fraction of the price. */
  volatility: number;
}

const FX = 0.00002;

export const REFERENCE_PRICES: Readonly<Record<string, ReferencePrice>> = {
  EURUSD: { mid: 1.085, spread: 0.00012, volatility: FX },
  GBPUSD: { mid: 1.265, spread: 0.00015, volatility: FX },
  USDJPY: { mid: 150.2, spread: 0.012, volatility: FX },
  USDCHF: { mid: 0.885, spread: 0.00015, volatility: FX },
  USDCAD: { mid: 1.355, spread: 0.00018, volatility: FX },
  AUDUSD: { mid: 0.655, spread: 0.00012, volatility: FX },
  NZDUSD: { mid: 0.605, spread: 0.00018, volatility: FX },
  EURGBP: { mid: 0.8575, spread: 0.00015, volatility: FX },
  EURJPY: { mid: 162.95, spread: 0.018, volatility: FX },
  GBPJPY: { mid: 190.0, spread: 0.025, volatility: FX },
  EURCHF: { mid: 0.96, spread: 0.0002, volatility: FX },
  AUDJPY: { mid: 98.4, spread: 0.02, volatility: FX },
  XAUUSD: { mid: 2350.0, spread: 0.3, volatility: 0.00005 },
  XAGUSD: { mid: 28.5, spread: 0.025, volatility: 0.00008 },
  US30: { mid: 39000, spread: 2, volatility: 0.00004 },
  US500: { mid: 5200, spread: 0.5, volatility: 0.00004 },
  NAS100: { mid: 18200, spread: 1.5, volatility: 0.00005 },
  GER40: { mid: 18000, spread: 1.5, volatility: 0.00004 },
  UK100: { mid: 8100, spread: 1, volatility: 0.00004 },
  JP225: { mid: 38500, spread: 8, volatility: 0.00005 },
  BTCUSD: { mid: 65000, spread: 15, volatility: 0.0001 },
  ETHUSD: { mid: 3200, spread: 1.5, volatility: 0.00012 },
};
