/** A parameter the sender gave: its name for problems, its body position, and its value when readable. */
export interface GivenParameter<T> {
  param: string;
  position: number;
  /** Undefined when the value could not be read (that problem is already reported). */
  value: T | undefined;
}
