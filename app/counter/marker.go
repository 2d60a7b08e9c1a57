package counter

// ListeningMarker starts the line the app prints once it accepts requests; the URL follows.
const ListeningMarker = "persistlab app listening on "
