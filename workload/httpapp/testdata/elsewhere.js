import http from 'k6/http';

// Loads the app, and tries an address off this machine, which persistlab's k6 must refuse.
export default function () {
  http.get(`${__ENV.BASE_URL}/`);
  http.get('http://10.1.2.3/');
}
