package hsm

// Base is the path prefix of the HSM v2 API.
const Base = "/hsm/v2"
