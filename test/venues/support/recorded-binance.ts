import ccxt from 'ccxt';
import { paramsOf, responseRecord, type SentRequest } from './ccxt-records.js';

/**
 * Binance USDⓈ-M answered from CCXT's recorded responses (test/fixtures/ccxt), keeping the
 * conditional (algo) orders it was asked to place so that cancels, look-ups and a restart see
 * them. Where CCXT's records hold no answer for an endpoint (the algo-order endpoint, which
 * Binance added in 2025), the answer is the shape CCXT's own binance.js documents for it, with
 * the values of the request.
 *
 * Prices: `shift` is added to every price of the recorded order book ("swap orderbook": bid
 * 42651.1, ask 42878), which changes only its numbers, so quotes can cross a signal's
 * breakeven and trailing thresholds.
 */
const RESPONSES = 'binance-responses.json';

export interface AlgoOrder {
  algoId: number;
  clientAlgoId: string;
  symbol: string;
  side: string;
  quantity: string;
  triggerPrice: string;
  reduceOnly: boolean;
  algoStatus: 'NEW' | 'CANCELED';
}

export class RecordedBinance {
  shift = 0;
  /** Requests whose answer never comes (the agent is stopped while it waits); the exchange did not act on them. */
  hang: ((request: SentRequest) => boolean) | null = null;
  readonly algo = new Map<number, AlgoOrder>();
  readonly cancelled: number[] = [];
  private nextAlgoId = 3358;
  private hanging: Array<(error: Error) => void> = [];

  answer = (request: SentRequest): unknown => {
    if (this.hang?.(request)) {
      return new Promise((_resolve, reject) => this.hanging.push(reject));
    }
    const path = new URL(request.url).pathname;
    const params = paramsOf(request.url, request.body, 'urlencoded') as Record<string, string>;
    switch (`${request.method} ${path}`) {
      case 'GET /fapi/v1/depth':
        return this.book();
      case 'GET /fapi/v2/balance':
      case 'GET /fapi/v2/account':
      case 'GET /fapi/v3/account':
        return responseRecord(RESPONSES, 'fetchBalance', 'Linear swap balance');
      case 'GET /fapi/v2/positionRisk':
      case 'GET /fapi/v3/positionRisk':
        return responseRecord(RESPONSES, 'fetchPositions', 'Fetch linear positions without symbols');
      case 'GET /fapi/v1/openOrders':
        return [];
      case 'GET /fapi/v1/openAlgoOrders':
        return [...this.algo.values()].filter((o) => o.algoStatus === 'NEW').map((o) => this.algoAnswer(o));
      case 'POST /fapi/v1/order':
        // The recorded filled market order (0.01 BTC at 47279.4).
        return (responseRecord(RESPONSES, 'fetchOrders', 'fetch portfolio margin orders') as unknown[])[0];
      case 'POST /fapi/v1/algoOrder': {
        const order: AlgoOrder = {
          algoId: this.nextAlgoId++,
          clientAlgoId: params.clientAlgoId!,
          symbol: params.symbol!,
          side: params.side!,
          quantity: params.quantity!,
          triggerPrice: params.triggerPrice!,
          reduceOnly: params.reduceOnly === 'true',
          algoStatus: 'NEW',
        };
        if ([...this.algo.values()].some((o) => o.clientAlgoId === order.clientAlgoId && o.algoStatus === 'NEW')) {
          throw new ccxt.DuplicateOrderId('binance {"code":-4116,"msg":"ClientOrderId is duplicated."}');
        }
        this.algo.set(order.algoId, order);
        return this.algoAnswer(order);
      }
      case 'GET /fapi/v1/algoOrder': {
        const found = [...this.algo.values()].find((o) => o.clientAlgoId === params.clientAlgoId || String(o.algoId) === params.algoId);
        if (!found) throw new ccxt.OrderNotFound('binance {"code":-2013,"msg":"Order does not exist."}');
        return this.algoAnswer(found);
      }
      case 'DELETE /fapi/v1/algoOrder': {
        const found = this.algo.get(Number(params.algoId));
        if (!found || found.algoStatus !== 'NEW') throw new ccxt.OrderNotFound('binance {"code":-2011,"msg":"Unknown order sent."}');
        found.algoStatus = 'CANCELED';
        this.cancelled.push(found.algoId);
        return { algoId: found.algoId, clientAlgoId: found.clientAlgoId, code: '200', msg: 'success' };
      }
      default:
        throw new ccxt.BadRequest(`no recorded answer for ${request.method} ${path}`);
    }
  };

  /** The stop orders standing on the exchange. */
  openStops(): AlgoOrder[] {
    return [...this.algo.values()].filter((o) => o.algoStatus === 'NEW');
  }

  /** Fails the requests left hanging (the agent that sent them is gone). */
  release(): void {
    for (const reject of this.hanging.splice(0)) reject(new ccxt.NetworkError('connection closed'));
  }

  private book(): unknown {
    const recorded = responseRecord(RESPONSES, 'fetchOrderBook', 'swap orderbook') as { bids: string[][]; asks: string[][] };
    const move = (levels: string[][]) => levels.map(([price, amount]) => [(Number(price) + this.shift).toFixed(2), amount]);
    return { ...recorded, bids: move(recorded.bids), asks: move(recorded.asks) };
  }

  private algoAnswer(order: AlgoOrder): unknown {
    return {
      algoId: order.algoId,
      clientAlgoId: order.clientAlgoId,
      algoType: 'CONDITIONAL',
      orderType: 'STOP_MARKET',
      symbol: order.symbol,
      side: order.side,
      positionSide: 'BOTH',
      timeInForce: 'GTC',
      quantity: order.quantity,
      algoStatus: order.algoStatus,
      triggerPrice: order.triggerPrice,
      price: '0.00',
      workingType: 'CONTRACT_PRICE',
      priceMatch: 'NONE',
      closePosition: false,
      priceProtect: false,
      reduceOnly: order.reduceOnly,
      createTime: 1763458576201,
      updateTime: 1763458576201,
      triggerTime: 0,
      goodTillDate: 0,
    };
  }
}
