/**
 * The HTTP control of the faults, only with `faultControl: true`: `POST /_provider/faults` (one
 * fault and its options, e.g. `{"kind":"status","status":503,"endpoint":"token","times":2}`),
 * `GET` (the active ones), `DELETE` (all, or `/{id}`). Otherwise 404. Anyone reaching the port
 * can make the provider fail unless `controlToken` is set.
 */
import { empty, json, oauthError } from '../http/answer.js';
import { mediaTypeOf } from '../http/media-type.js';
import type { ProviderRoute } from '../router.js';
import type { FaultController } from './controller.js';

/** Path of the fault control. */
export const FAULTS_PATH = '/_provider/faults';

const NO_STORE = { 'Cache-Control': 'no-store' };

/** The routes of the fault control. */
export function faultControlRoutes(faults: FaultController): ProviderRoute[] {
  const refuse = (status: number, description: string) => oauthError(status, 'invalid_request', description);
  return [
    {
      endpoint: 'control',
      method: 'POST',
      path: FAULTS_PATH,
      failure: 'json',
      control: true,
      body: { maxBytes: 4096 },
      handle: (req) => {
        if (mediaTypeOf(req.headers) !== 'application/json') return refuse(415, 'Send the fault as application/json.');
        if (req.body.kind !== 'json') {
          const status = req.body.kind === 'error' && req.body.status === 413 ? 413 : 400;
          return refuse(status, 'The body is not a JSON object of at most 4096 bytes.');
        }
        try {
          return json(201, faults.injectFlat(req.body.value), NO_STORE);
        } catch (err) {
          return refuse(400, err instanceof TypeError ? err.message : 'The fault could not be injected.');
        }
      },
    },
    {
      endpoint: 'control',
      method: 'GET',
      path: FAULTS_PATH,
      failure: 'json',
      control: true,
      handle: () => json(200, { faults: faults.active() }, NO_STORE),
    },
    {
      endpoint: 'control',
      method: 'DELETE',
      path: FAULTS_PATH,
      failure: 'json',
      control: true,
      handle: () => {
        faults.clear();
        return empty(204);
      },
    },
    {
      endpoint: 'control',
      method: 'DELETE',
      path: `${FAULTS_PATH}/:id`,
      failure: 'json',
      control: true,
      handle: (req) => {
        const raw = req.params['id'] ?? '';
        const id = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
        if (Number.isInteger(id) && faults.remove(id)) return empty(204);
        return json(404, { error: 'not_found', error_description: 'No such active fault.' }, NO_STORE);
      },
    },
  ];
}
