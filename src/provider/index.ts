/** The service itself, as an Express app: see createProvider. */
export {};
