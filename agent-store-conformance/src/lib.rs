//! One conformance suite for every [`Store`](agent_core::Store) and
//! [`TabStore`](agent_core::tabs::TabStore): each behaviour the traits promise is one
//! `pub async fn` taking a [`Fixture`] (a fresh, empty store and a way to open it again), and
//! [`store_conformance_tests!`] turns the whole list into `#[tokio::test]`s for one store. The
//! memory store, the SQLite store and the PostgreSQL store instantiate the same list, so a
//! behaviour cannot differ between them without a test failing.
//!
//! ```text
//! async fn open() -> agent_store_conformance::Fixture { /* a fresh store */ }
//! agent_store_conformance::store_conformance_tests!(open);
//! // Or with attributes on every test:
//! agent_store_conformance::store_conformance_tests!(open, #[ignore = "needs a server"]);
//! ```

// Everything here is test code: a failed expectation is a panic, as in any test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fixture;
mod kinds;
mod messages;
mod repair;
mod replay;
mod session_state;
mod sessions;
mod tabs;
mod tool_calls;

pub use fixture::{Fixture, Handles};
pub use kinds::{assert_valid_transcript, every_kind};
pub use messages::{
    an_empty_append_is_checked_like_any_other, concurrent_writers_never_interleave, every_message_kind_round_trips,
    history_survives_reopening, parallel_sessions_stay_apart, stale_sequence_number_is_a_conflict_and_writes_nothing,
};
pub use repair::an_interrupted_turn_is_repaired_when_its_session_is_opened;
pub use replay::{
    a_different_final_state_is_an_invalid_transition, a_gap_is_still_a_conflict,
    a_replayed_append_stores_nothing_twice, a_replayed_tool_call_write_is_ignored,
    an_overlapping_append_that_differs_is_a_conflict_and_writes_nothing,
    an_overlapping_append_writes_only_its_new_messages,
};
pub use session_state::{compactions_parked_runs_and_key_values, text_with_nul_and_unicode_round_trips_exactly};
pub use sessions::{
    an_append_counts_as_a_change_of_its_session, deleting_a_session_deletes_its_key_values,
    generated_sessions_behave_like_created_ones, missing_sessions_are_reported,
    sessions_are_listed_renamed_and_deleted,
};
pub use tabs::{
    a_hub_restarts_from_the_store, tab_records_round_trip_and_update_in_place, tabs_are_listed_oldest_first,
    the_prefix_query_is_literal_and_open_only,
};
pub use tool_calls::{an_owned_record_is_written_like_a_lent_one, tool_call_state_machine_is_enforced};

/// Expands to one `#[tokio::test]` per conformance function, each given a fresh fixture from
/// `$open` (a path to an `async fn() -> Fixture`). Attributes after it (such as
/// `#[ignore = "..."]`) go on every test. The calling crate needs `tokio` as a dependency.
#[macro_export]
macro_rules! store_conformance_tests {
    ($open:path $(, #[$attr:meta])* $(,)?) => {
        $crate::__conformance_tests!(
            [$(#[$attr])*], $open,
            every_message_kind_round_trips,
            history_survives_reopening,
            stale_sequence_number_is_a_conflict_and_writes_nothing,
            an_empty_append_is_checked_like_any_other,
            concurrent_writers_never_interleave,
            parallel_sessions_stay_apart,
            sessions_are_listed_renamed_and_deleted,
            deleting_a_session_deletes_its_key_values,
            missing_sessions_are_reported,
            an_append_counts_as_a_change_of_its_session,
            generated_sessions_behave_like_created_ones,
            tool_call_state_machine_is_enforced,
            an_owned_record_is_written_like_a_lent_one,
            a_replayed_append_stores_nothing_twice,
            an_overlapping_append_writes_only_its_new_messages,
            an_overlapping_append_that_differs_is_a_conflict_and_writes_nothing,
            a_gap_is_still_a_conflict,
            a_replayed_tool_call_write_is_ignored,
            a_different_final_state_is_an_invalid_transition,
            compactions_parked_runs_and_key_values,
            text_with_nul_and_unicode_round_trips_exactly,
            an_interrupted_turn_is_repaired_when_its_session_is_opened,
            tab_records_round_trip_and_update_in_place,
            the_prefix_query_is_literal_and_open_only,
            tabs_are_listed_oldest_first,
            a_hub_restarts_from_the_store,
        );
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    ($attrs:tt, $open:path, $($name:ident),+ $(,)?) => {
        $( $crate::__conformance_test!($attrs, $open, $name); )+
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_test {
    ([$(#[$attr:meta])*], $open:path, $name:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            $crate::$name($open().await).await;
        }
    };
}
