/** Named settings (e.g. the generated admin token's digest, the public URL the server renders). */
export interface Settings {
  /** Stores `value` under `name` unless a value is already there; answers the value in force. */
  claim(name: string, value: string): Promise<string>;
  get(name: string): Promise<string | null>;
  /** Stores `value` under `name`, replacing any value there. */
  set(name: string, value: string): Promise<void>;
  /** Removes the setting `name`, if there is one (e.g. a generated admin token's digest, once the operator set one). */
  delete(name: string): Promise<void>;
}
