import { ccxt } from '../../../src/agent/venues/ccxt/ccxt-library.js';
import { fixture, paramsOf, responseRecord, type SentRequest } from './ccxt-records.js';

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
  /** Resting (limit) orders, by id. */
  readonly resting = new Map<number, Record<string, unknown>>();
  /** Set: new orders are refused with this error (as Binance answered it). */
  refuse: Error | null = null;
  /** Set: new stop (conditional) orders are refused with this error. */
  refuseStops: Error | null = null;
  /**
   * The net position the market orders made (buy +, sell −). The recorded position (0.009 BTC) is
   * answered with this amount: a reconciliation must find what the agent traded, not shrink it.
   */
  private positionAmt = 0;
  private nextAlgoId = 3358;
  private nextOrderId = 4087922044;
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
        return (
          responseRecord(RESPONSES, 'fetchPositions', 'Fetch linear positions without symbols') as Record<
            string,
            unknown
          >[]
        ).map((p) => ({ ...p, positionAmt: String(Math.round(this.positionAmt * 1e8) / 1e8) }));
      case 'GET /fapi/v1/openOrders':
        return [];
      case 'GET /fapi/v1/openAlgoOrders':
        return [...this.algo.values()].filter((o) => o.algoStatus === 'NEW').map((o) => this.algoAnswer(o));
      case 'GET /sapi/v1/capital/config/getall':
        // The coins' networks and fees, which CCXT loads with the markets when it has keys: not
        // among the records, and nothing the agent uses; an empty list.
        return [];
      case 'GET /fapi/v1/leverageBracket':
        // The margin tiers CCXT reads before the positions (for their maintenance margin): not
        // among the records, and nothing the agent uses; none (the in-process tests give CCXT
        // the same empty set as an option).
        return [];
      case 'GET /api/v3/exchangeInfo':
        return this.exchangeInfo('spot');
      case 'GET /fapi/v1/exchangeInfo':
        return this.exchangeInfo('linear');
      case 'GET /dapi/v1/exchangeInfo':
        return this.exchangeInfo('inverse');
      case 'POST /fapi/v1/order': {
        if (this.refuse) throw this.refuse;
        const orderId = this.nextOrderId++;
        const own = {
          orderId,
          clientOrderId: params.newClientOrderId,
          side: params.side,
          origQty: params.quantity,
          reduceOnly: params.reduceOnly === 'true',
        };
        if (params.type === 'MARKET') {
          this.positionAmt += (params.side === 'BUY' ? 1 : -1) * Number(params.quantity);
          // The recorded filled market order (filled at 47279.4), for the lots asked.
          const filled = (
            responseRecord(RESPONSES, 'fetchOrders', 'fetch portfolio margin orders') as Record<string, unknown>[]
          )[0]!;
          return { ...filled, ...own, executedQty: params.quantity, positionSide: 'BOTH' };
        }
        // The recorded resting limit order, at the price asked.
        const resting = (
          responseRecord(RESPONSES, 'createOrders', 'create swap orders') as Record<string, unknown>[]
        )[0]!;
        const answer = { ...resting, ...own, price: params.price };
        this.resting.set(orderId, answer);
        return answer;
      }
      case 'GET /fapi/v1/order': {
        // A resting order looked up (the agent follows its targets): as it rests.
        const found = this.resting.get(Number(params.orderId));
        if (!found) throw new ccxt.OrderNotFound('binance {"code":-2013,"msg":"Order does not exist."}');
        return found;
      }
      case 'DELETE /fapi/v1/order': {
        const found = this.resting.get(Number(params.orderId));
        if (!found) throw new ccxt.OrderNotFound('binance {"code":-2011,"msg":"Unknown order sent."}');
        this.resting.delete(Number(params.orderId));
        this.cancelled.push(Number(params.orderId));
        return { ...found, status: 'CANCELED' };
      }
      case 'POST /fapi/v1/algoOrder': {
        if (this.refuseStops) throw this.refuseStops;
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
        const found = [...this.algo.values()].find(
          (o) => o.clientAlgoId === params.clientAlgoId || String(o.algoId) === params.algoId,
        );
        if (!found) throw new ccxt.OrderNotFound('binance {"code":-2013,"msg":"Order does not exist."}');
        return this.algoAnswer(found);
      }
      case 'DELETE /fapi/v1/algoOrder': {
        const found = this.algo.get(Number(params.algoId));
        if (!found || found.algoStatus !== 'NEW')
          throw new ccxt.OrderNotFound('binance {"code":-2011,"msg":"Unknown order sent."}');
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

  /**
   * The exchange's market list of a kind: the `info` of each market in CCXT's recorded markets
   * (binance-markets.json), which is the exchange's own description of the market, in the
   * exchangeInfo envelope.
   */
  private exchangeInfo(kind: 'spot' | 'linear' | 'inverse'): unknown {
    const markets =
      fixture<Record<string, { type: string; linear?: boolean; inverse?: boolean; info: unknown }>>(
        'binance-markets.json',
      );
    const symbols = Object.values(markets)
      .filter((m) =>
        kind === 'spot'
          ? m.type === 'spot'
          : m.type === 'swap' && (kind === 'linear' ? m.linear === true : m.inverse === true),
      )
      .map((m) => m.info);
    return { timezone: 'UTC', serverTime: 1763458576201, rateLimits: [], exchangeFilters: [], symbols };
  }

  private book(): unknown {
    const recorded = responseRecord(RESPONSES, 'fetchOrderBook', 'swap orderbook') as {
      bids: string[][];
      asks: string[][];
    };
    const move = (levels: string[][]) =>
      levels.map(([price, amount]) => [(Number(price) + this.shift).toFixed(2), amount]);
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
