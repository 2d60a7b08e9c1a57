import http from 'k6/http';
import { check } from 'k6';

// Loads the app with one check that holds and one that never does.
export default function () {
  const res = http.get(`${__ENV.BASE_URL}/`);
  check(res, {
    'status is 200': (r) => r.status === 200,
    'never holds': () => false,
  });
}
