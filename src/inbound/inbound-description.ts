import { ErrorCode } from '../errors/catalog.js';
import {
  ACTIONS,
  documentedParameters,
  type DocumentedParameter,
  MAX_TP_LEVELS,
  type ParameterDefinition,
} from '../language/index.js';
import type { JsonSchema, RouteDescription } from '../openapi/index.js';
import { MAX_BODY_BYTES } from './receive-signal.js';

/**
 * What each kind of parameter means, for the API description. Keyed by every kind the parameter
 * table has, so a new kind does not compile until it is described here; a new name of an
 * existing kind appears in the document by itself.
 */
const MEANING: Record<ParameterDefinition['kind'], string> = {
  symbol: 'the instrument, e.g. EURUSD (in text: the first field)',
  action: `what to do: ${ACTIONS.join(', ')} (in text: the second field)`,
  comment: 'free text passed to the agent',
  volume: 'the volume; the name says its type (lots, % of balance or equity, money, % risked at the stop)',
  typedVolume: 'the volume, of the type volumeType names',
  volumeType: 'the type of volume: lots, pctbal, pcteq, dollar, pctbal_loss, pcteq_loss',
  sl: 'the stop loss, in the unit the name says (pips, price or percent)',
  typedSl: 'the stop loss, in the unit slType names',
  slType: 'the unit of sl: pips, price or percent',
  tp: 'one take profit for the whole position, in the unit the name says',
  typedTp: 'the take profit, in the unit tpType names',
  tpType: 'the unit of tp: pips, price or percent',
  tpLevel: `take-profit level N (1 to ${MAX_TP_LEVELS}); a bare tpN takes the unit of tp1`,
  tpShare: 'the percentage of the position closed at take-profit level N',
  entry: 'the entry price of a pending order, in the unit the name says',
  trail: 'trailing stop: trigger, distance or step',
  breakeven: 'move the stop to break-even: trigger, or offset from the entry',
  closePct: 'the percentage of the position to close',
  closeLots: 'the lots of the position to close',
  opposite: 'exop: close the opposite position first; exent: close it and enter',
};

function describe(parameter: DocumentedParameter): JsonSchema {
  const only = parameter.formats.length === 1 ? ' (JSON only)' : '';
  const schema: JsonSchema = { description: `${MEANING[parameter.kind]}${only}` };
  if (parameter.kind === 'symbol' || parameter.kind === 'comment') schema.type = 'string';
  if (parameter.kind === 'action') schema.enum = ACTIONS;
  return schema;
}

function jsonSignalSchema(): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const patternProperties: Record<string, JsonSchema> = {};
  for (const parameter of documentedParameters()) {
    if (parameter.pattern === undefined) properties[parameter.name] = describe(parameter);
    else patternProperties[parameter.pattern] = describe(parameter);
  }
  return {
    type: 'object',
    description: `One signal as a JSON object. Names are matched ignoring ASCII case; numbers may be JSON numbers or decimal strings. An unknown name is refused (422 ${ErrorCode.UNKNOWN_PARAMETER}), never ignored.`,
    properties,
    patternProperties,
    required: ['symbol', 'action'],
    additionalProperties: false,
    examples: [{ symbol: 'EURUSD', action: 'buy', vol_pctbal_loss: 1, sl_pips: 20 }],
  };
}

function textSignalSchema(): JsonSchema {
  const names = documentedParameters()
    .filter(
      (parameter) => parameter.formats.includes('text') && parameter.kind !== 'symbol' && parameter.kind !== 'action',
    )
    .map((parameter) => parameter.name);
  return {
    type: 'string',
    description: `SYMBOL,action followed by name=value fields, comma-separated. The names: ${names.join(', ')}.`,
    maxLength: MAX_BODY_BYTES,
    examples: ['EURUSD,buy,vol_pctbal_loss=1,sl_pips=20'],
  };
}

/** `POST /api/inbound/{sourceAuthKey}`, which is answered before the router (http-handler.ts). */
export const INBOUND_DESCRIPTION: RouteDescription = {
  summary: 'Send a signal',
  description: `Checks, meters and stores one signal for delivery to the account's agents. The body is at most ${MAX_BODY_BYTES} bytes of UTF-8; without Content-Type the format is recognised from the body. Nothing is answered before the signal is durably stored.`,
  tag: 'inbound',
  auth: 'none',
  params: {
    sourceAuthKey: { type: 'string', description: "the source's authKey (the secret part of its inbound URL)" },
  },
  headers: {
    'X-Signature': {
      description:
        "'sha256=' and the hex HMAC-SHA256 of the raw body with the source's secret; when present it alone decides",
      schema: { type: 'string', pattern: '^sha256=[0-9a-fA-F]{64}$' },
    },
    'X-Signature-Timestamp': {
      description:
        "optional: the signing time in unix seconds; X-Signature then covers the timestamp, a '.' and the raw body, and the request is refused more than 300 s from the server's clock",
      schema: { type: 'string', pattern: '^[0-9]{1,12}$' },
    },
    'X-Signalgate-Secret': {
      description: "the source's HMAC secret itself, where the sender cannot sign",
      schema: { type: 'string' },
    },
    'Idempotency-Key': {
      description:
        'makes retries safe: a repeat within 24 hours gets the original answer (with Idempotent-Replayed: true)',
      schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
    },
  },
  body: {
    required: true,
    schema: jsonSignalSchema(),
    mediaTypes: { 'application/json': jsonSignalSchema(), 'text/plain': textSignalSchema() },
  },
  answers: {
    202: {
      description: 'Stored and queued for delivery',
      schema: {
        type: 'object',
        properties: {
          id: { type: 'string', description: 'the signal id' },
          status: {
            type: 'string',
            enum: ['queued', 'halted'],
            description:
              'queued for its agents; halted: its account, source or every agent it was for is halted, and it is never delivered (docs/risk.md)',
          },
          signal: { type: 'object', description: 'the normalized signal' },
          quota: {
            type: ['object', 'null'],
            properties: {
              used: { type: 'integer' },
              limit: { type: 'integer' },
              period: { type: 'string', examples: ['2026-11'] },
            },
          },
        },
        required: ['id', 'status', 'signal', 'quota'],
      },
      headers: {
        'Idempotent-Replayed': {
          description: "'true' on a repeat answered from the original",
          schema: { type: 'string' },
        },
      },
    },
  },
  problems: [
    ErrorCode.INVALID_REQUEST,
    ErrorCode.PARSE_ERROR,
    ErrorCode.INVALID_SOURCE_KEY,
    ErrorCode.SOURCE_INACTIVE,
    ErrorCode.HMAC_MISMATCH,
    ErrorCode.SIGNATURE_TIMESTAMP_OUT_OF_RANGE,
    ErrorCode.PAYLOAD_TOO_LARGE,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    ErrorCode.MISSING_SYMBOL,
    ErrorCode.MISSING_ACTION,
    ErrorCode.UNKNOWN_ACTION,
    ErrorCode.UNKNOWN_PARAMETER,
    ErrorCode.INVALID_VOLUME,
    ErrorCode.SL_REQUIRED,
    ErrorCode.ENTRY_REQUIRED,
    ErrorCode.INVALID_PARAMETER,
    ErrorCode.IDEMPOTENCY_KEY_REUSED,
    ErrorCode.QUOTA_SIGNALS_IN,
    ErrorCode.SHUTTING_DOWN,
    ErrorCode.INTERNAL_ERROR,
  ],
};
