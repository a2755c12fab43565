//! The wording every hotel starts with, in English and German: a subject and a body per kind of message. A hotel
//! may replace either in its settings; the facts of the stay and how to reach the hotel follow the body in every
//! message whatever the wording, so an edited template cannot leave them out.

use super::{Language, MessageKind};

/// The shipped subject and body of `kind` in `language`.
pub fn wording(kind: MessageKind, language: Language) -> (&'static str, &'static str) {
    use Language::*;
    use MessageKind::*;
    match (kind, language) {
        (InvoiceIssued, English) => (
            "Your invoice {{ invoice.number }} from {{ hotel.name }} ({{ stay.reference }})",
            "Dear {{ guest.first_name }} {{ guest.last_name }},\n\n\
             thank you for staying at {{ hotel.name }}. Attached is your invoice {{ invoice.number }} over \
             {{ invoice.total }} as a PDF.\n\n\
             Please quote the reference {{ stay.reference }} if you write to us.",
        ),
        (InvoiceIssued, German) => (
            "Ihre Rechnung {{ invoice.number }} vom {{ hotel.name }} ({{ stay.reference }})",
            "Guten Tag {{ guest.first_name }} {{ guest.last_name }},\n\n\
             vielen Dank für Ihren Aufenthalt im {{ hotel.name }}. Anbei erhalten Sie Ihre Rechnung \
             {{ invoice.number }} über {{ invoice.total }} als PDF.\n\n\
             Bitte geben Sie die Nummer {{ stay.reference }} an, wenn Sie uns schreiben.",
        ),
        (RequestReceived, English) => (
            "We have received your booking request ({{ stay.reference }})",
            "Dear {{ guest.first_name }} {{ guest.last_name }},\n\n\
             thank you for your request to stay at {{ hotel.name }}. We have received it and will confirm it as soon \
             as we have checked it; you will hear from us by e-mail. Your request is not a confirmed booking yet.\n\n\
             Please quote the reference {{ stay.reference }} if you write to us.",
        ),
        (RequestReceived, German) => (
            "Wir haben Ihre Buchungsanfrage erhalten ({{ stay.reference }})",
            "Guten Tag {{ guest.first_name }} {{ guest.last_name }},\n\n\
             vielen Dank für Ihre Anfrage im {{ hotel.name }}. Wir haben sie erhalten und bestätigen sie, sobald wir \
             sie geprüft haben; Sie hören per E-Mail von uns. Ihre Anfrage ist noch keine bestätigte Buchung.\n\n\
             Bitte geben Sie die Nummer {{ stay.reference }} an, wenn Sie uns schreiben.",
        ),
        (StayConfirmed, English) => (
            "Your stay at {{ hotel.name }} is confirmed ({{ stay.reference }})",
            "Dear {{ guest.first_name }} {{ guest.last_name }},\n\n\
             we are glad to confirm your stay at {{ hotel.name }}, from {{ stay.check_in }} to {{ stay.check_out }}. \
             Check-in is from {{ hotel.check_in_time }}, check-out until {{ hotel.check_out_time }}.\n\n\
             We look forward to welcoming you.",
        ),
        (StayConfirmed, German) => (
            "Ihr Aufenthalt im {{ hotel.name }} ist bestätigt ({{ stay.reference }})",
            "Guten Tag {{ guest.first_name }} {{ guest.last_name }},\n\n\
             gerne bestätigen wir Ihren Aufenthalt im {{ hotel.name }} vom {{ stay.check_in }} bis zum \
             {{ stay.check_out }}. Check-in ist ab {{ hotel.check_in_time }} Uhr, Check-out bis \
             {{ hotel.check_out_time }} Uhr.\n\n\
             Wir freuen uns auf Ihren Besuch.",
        ),
        (RequestDeclined, English) => (
            "Your booking request at {{ hotel.name }} ({{ stay.reference }})",
            "Dear {{ guest.first_name }} {{ guest.last_name }},\n\n\
             we are sorry: we cannot accept your request to stay at {{ hotel.name }} from {{ stay.check_in }} to \
             {{ stay.check_out }}. Nothing has been charged.\n\n\
             Please get in touch if other dates would suit you.",
        ),
        (RequestDeclined, German) => (
            "Ihre Buchungsanfrage im {{ hotel.name }} ({{ stay.reference }})",
            "Guten Tag {{ guest.first_name }} {{ guest.last_name }},\n\n\
             leider können wir Ihre Anfrage für den Aufenthalt im {{ hotel.name }} vom {{ stay.check_in }} bis zum \
             {{ stay.check_out }} nicht annehmen. Es wurde nichts berechnet.\n\n\
             Melden Sie sich gerne, wenn andere Daten für Sie in Frage kommen.",
        ),
        (StayCancelled, English) => (
            "Your stay at {{ hotel.name }} is cancelled ({{ stay.reference }})",
            "Dear {{ guest.first_name }} {{ guest.last_name }},\n\n\
             your stay at {{ hotel.name }} from {{ stay.check_in }} to {{ stay.check_out }} has been cancelled.\n\n\
             If you did not expect this, please contact us.",
        ),
        (StayCancelled, German) => (
            "Ihr Aufenthalt im {{ hotel.name }} ist storniert ({{ stay.reference }})",
            "Guten Tag {{ guest.first_name }} {{ guest.last_name }},\n\n\
             Ihr Aufenthalt im {{ hotel.name }} vom {{ stay.check_in }} bis zum {{ stay.check_out }} wurde \
             storniert.\n\n\
             Falls Sie das nicht erwartet haben, melden Sie sich bitte bei uns.",
        ),
        (PreArrivalReminder, English) => (
            "See you soon at {{ hotel.name }} ({{ stay.reference }})",
            "Dear {{ guest.first_name }} {{ guest.last_name }},\n\n\
             your stay at {{ hotel.name }} begins on {{ stay.check_in }}. Check-in is from {{ hotel.check_in_time }}; \
             if you expect to arrive late, please let us know.\n\n\
             We look forward to welcoming you.",
        ),
        (PreArrivalReminder, German) => (
            "Bis bald im {{ hotel.name }} ({{ stay.reference }})",
            "Guten Tag {{ guest.first_name }} {{ guest.last_name }},\n\n\
             Ihr Aufenthalt im {{ hotel.name }} beginnt am {{ stay.check_in }}. Check-in ist ab \
             {{ hotel.check_in_time }} Uhr; wenn Sie später ankommen, geben Sie uns bitte Bescheid.\n\n\
             Wir freuen uns auf Ihren Besuch.",
        ),
    }
}
