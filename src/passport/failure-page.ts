/** The failure page (flow/failure-page.ts) sent through Express. */
import type { Response } from 'express';
import { FAILURE_PAGE_HEADERS, renderFailurePage, type FailurePage } from '../flow/failure-page.js';

export type { FailurePage } from '../flow/failure-page.js';

/** Sends the page with headers that keep it out of caches and frames. */
export function sendFailurePage(res: Response, page: FailurePage): void {
  res.status(page.status).set(FAILURE_PAGE_HEADERS).send(renderFailurePage(page));
}
