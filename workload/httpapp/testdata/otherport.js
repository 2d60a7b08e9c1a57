import http from 'k6/http';

// Loads the app, and another program on this machine's loopback, which persistlab must not let
// pass as a measurement of the app.
export default function () {
  http.get(`${__ENV.BASE_URL}/`);
  http.get(`http://127.0.0.1:${__ENV.OTHER_PORT}/`);
}
