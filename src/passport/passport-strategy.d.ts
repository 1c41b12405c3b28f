/** `passport-strategy` ships no types; only the class this package extends is declared. */
declare module 'passport-strategy' {
  export class Strategy {
    authenticate(req: unknown, options?: object): void;
  }
}
