import http from 'k6/http';

export const options = { vus: 7, duration: '1m' }; // replaced by persistlab's

export function setup() {
  return { path: '/' };
}

// One request per iteration.
export default function (data) {
  http.get(`${__ENV.BASE_URL}${data.path}`);
}
