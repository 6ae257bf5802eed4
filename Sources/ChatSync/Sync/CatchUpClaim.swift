/// A channel's running catch-up: the connection it runs in, and whether only real-time
/// messages asked for it. Such a catch-up, failing, joins the sync's chain of retries
/// without starting its count over; once the app (a clear, a fetch) asked for it too,
/// while it ran, its failure earns a chain of its own (see `SyncEngine.runCatchUp`).
struct CatchUpClaim {
    let epoch: Int
    var onlyArrivals: Bool
}
