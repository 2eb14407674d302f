/** The two body formats a signal arrives in: the text line `EURUSD,buy,...` or one JSON object. */
export type SignalFormat = 'text' | 'json';
