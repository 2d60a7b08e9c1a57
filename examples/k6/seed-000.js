// Seed 000's k6 script as the seed published it, with only its URL taken from the environment:
// persistlab passes the app's loopback URL as BASE_URL, and its own vus and duration replace
// the ones below (the seed swept vus from 2 to 20 at 120 s each).
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  vus: 2,
  duration: '120s',
};

export default function() {
  const res = http.post(`${__ENV.BASE_URL}/count_up`);
  check(res, { "status is 200": (res) => res.status === 200 });
}
