/** Express 4, installed as the npm alias `express4` for the mount tests; typed as Express (same API for what they use). */
declare module 'express4' {
  import express from 'express';
  export default express;
}
