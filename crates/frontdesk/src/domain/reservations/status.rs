//! The reservation state machine.

pub use crate::model::reservations::{ReservationStatus, RoomStatus};

impl ReservationStatus {
    /// The stays on the books: every status but a cancellation and a no-show (what the rack and the occupancy
    /// summaries show).
    pub const ON_THE_BOOKS: [ReservationStatus; 4] =
        [Self::Requested, Self::Confirmed, Self::CheckedIn, Self::CheckedOut];

    /// The moves that exist: approve or decline a request; cancel, no-show or check in a confirmed stay; check out;
    /// undo a check-out made by mistake (the same day only: see [`super::stay`], which also holds the rules of
    /// check-in and check-out).
    pub fn can_move_to(self, to: ReservationStatus) -> bool {
        use ReservationStatus::*;
        matches!(
            (self, to),
            (Requested, Confirmed)
                | (Requested, Cancelled)
                | (Confirmed, Cancelled)
                | (Confirmed, NoShow)
                | (Confirmed, CheckedIn)
                | (CheckedIn, CheckedOut)
                | (CheckedOut, CheckedIn)
        )
    }

    /// Whether the confirmed rooms of a reservation in this state take inventory.
    pub fn holds_inventory(self) -> bool {
        matches!(self, Self::Confirmed | Self::CheckedIn)
    }

    /// The statuses a reservation may be created in.
    pub fn creatable(self) -> bool {
        matches!(self, Self::Requested | Self::Confirmed)
    }
}

impl RoomStatus {
    /// What a room becomes when its reservation enters `status`.
    pub fn after(self, status: ReservationStatus) -> RoomStatus {
        match status {
            ReservationStatus::Requested => RoomStatus::Pending,
            ReservationStatus::Cancelled => RoomStatus::Cancelled,
            ReservationStatus::Confirmed if self == RoomStatus::Pending => RoomStatus::Confirmed,
            _ => self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ReservationStatus::*;
    use super::*;

    #[test]
    fn only_the_listed_moves_exist() {
        let allowed = [
            (Requested, Confirmed),
            (Requested, Cancelled),
            (Confirmed, Cancelled),
            (Confirmed, NoShow),
            (Confirmed, CheckedIn),
            (CheckedIn, CheckedOut),
            (CheckedOut, CheckedIn),
        ];
        for from in ReservationStatus::ALL {
            for to in ReservationStatus::ALL {
                assert_eq!(from.can_move_to(to), allowed.contains(&(from, to)), "{from:?} -> {to:?}");
            }
        }
    }

    #[test]
    fn rooms_follow_their_reservation() {
        assert_eq!(RoomStatus::Pending.after(Confirmed), RoomStatus::Confirmed);
        assert_eq!(RoomStatus::Confirmed.after(Cancelled), RoomStatus::Cancelled);
        assert_eq!(RoomStatus::Confirmed.after(CheckedOut), RoomStatus::Confirmed);
        assert!(Confirmed.holds_inventory() && CheckedIn.holds_inventory());
        assert!(!NoShow.holds_inventory() && !CheckedOut.holds_inventory() && !Requested.holds_inventory());
    }
}
