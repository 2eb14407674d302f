/** Whether the server is draining: set once by the close hook, read by every handler. */
export interface DrainState {
  closing: boolean;
}
