//! Limits the service is configured with and the domain applies.

/// How many public booking requests a hotel takes per hour (`domain::attempts`'s window), per client address and
/// per guest e-mail; 0 leaves a count unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BookingLimits {
    pub per_address: u32,
    pub per_email: u32,
}
