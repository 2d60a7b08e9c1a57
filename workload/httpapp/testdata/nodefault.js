import http from 'k6/http';

// A script with a named scenario function and no default one.
export const options = { scenarios: { browse: { executor: 'constant-vus', vus: 1, duration: '1s', exec: 'browse' } } };

export function browse() {
  http.get(`${__ENV.BASE_URL}/`);
}
