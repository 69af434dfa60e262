//! What compensation found on one location.

/// Figures of one location.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocStats {
    /// Events read.
    pub events: u64,
    /// Measured and approximated times of the first and last event, ns.
    pub first: Option<(f64, f64)>,
    /// See `first`.
    pub last: Option<(f64, f64)>,
    /// Probe time removed, ns.
    pub probe_ns: f64,
    /// Its uncertainty (each probe's calibration standard deviation), ns.
    pub uncertainty_ns: f64,
    /// How much shorter and how much longer the location's approximated
    /// time would be if every removed probe had cost what a probe pair
    /// costs in the dearest and in the cheapest kind of loop timed at
    /// calibration (`Costs::context`), ns; `None` without that measurement.
    pub context_ns: Option<(f64, f64)>,
    /// The same if every removed probe had cost its calibration scaled by
    /// the fastest and the slowest speed the location's core ran at in the
    /// run (`Costs::speed_range`), ns; `None` without that measurement.
    pub speed_ns: Option<(f64, f64)>,
    /// The runtime's flush time removed, ns.
    pub flush_ns: f64,
    /// Measured waiting that the approximation no longer needed, ns.
    pub wait_removed_ns: f64,
    /// Waiting that the approximation added (the partner became later
    /// relative to this location), ns.
    pub wait_added_ns: f64,
    /// Dependent events resolved from their partner.
    pub dependencies: u64,
    /// Dependent events whose partner was never recorded.
    pub unmatched: u64,
    /// Events moved forward to keep the location's times in order.
    pub clamped: u64,
    /// A problem that cut the stream short.
    pub warning: Option<String>,
}

crate::wire::fields!(LocStats {
    events,
    first,
    last,
    probe_ns,
    uncertainty_ns,
    context_ns,
    speed_ns,
    flush_ns,
    wait_removed_ns,
    wait_added_ns,
    dependencies,
    unmatched,
    clamped,
    warning,
});
