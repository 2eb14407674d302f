/**
 * Reports an error that escaped every handler (thrown in a timer or callback, or a promise
 * rejected with nobody waiting for it) instead of letting it end the process, which is Node's
 * default for both. Every background task of the server catches what it expects and says what
 * it concerned; this is the net under them. A service that ended on one bad input, and again on
 * every restart that met the same input, would stop every account's signals, where one failed
 * task stops only what it was doing: the error is logged and serving goes on.
 */
export function reportEscapedErrors(
  report: (error: unknown, origin: 'uncaught exception' | 'unhandled rejection') => void,
): void {
  process.on('uncaughtException', (error) => report(error, 'uncaught exception'));
  process.on('unhandledRejection', (reason) => report(reason, 'unhandled rejection'));
}
