//! One function per page tool, each building the tool (name, description, gating) over the
//! state the set shares; `page_tools_with` lists them.

mod act;
mod click;
mod compact;
mod dialog;
mod history;
mod input;
mod last_read;
mod on_page;
mod output;
mod read;
mod screenshot;
mod scroll;
mod shared;
mod tabs;
mod target;
mod upload;
mod wait;

pub(crate) use act::{page_fill, page_navigate, page_select};
pub(crate) use click::page_click;
pub(crate) use dialog::page_dialog;
pub(crate) use history::{page_back, page_forward};
pub(crate) use input::{page_hover, page_press_key};
pub(crate) use on_page::{Acts, on_page};
pub(crate) use read::{page_read, page_scrape, page_text};
pub(crate) use screenshot::page_screenshot;
pub(crate) use scroll::page_scroll;
pub(crate) use shared::Shared;
pub(crate) use tabs::{tab_activate, tab_close, tab_open, tabs_list};
pub(crate) use upload::page_upload;
pub(crate) use wait::page_wait_for;
