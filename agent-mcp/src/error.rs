//! Errors of the MCP client and server.

/// Why connecting to, or serving, MCP failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The configuration cannot work (a bad alias, an empty command, an invalid header).
    #[error("invalid MCP configuration: {0}")]
    Config(String),
    /// The server process could not be started.
    #[error("could not start MCP server {alias:?} ({command}): {source}")]
    Spawn {
        /// The server's alias.
        alias: String,
        /// The command line.
        command: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The MCP handshake failed or timed out.
    #[error("MCP server {alias:?} did not complete the handshake: {message}")]
    Handshake {
        /// The server's alias.
        alias: String,
        /// What went wrong (with the tail of the server's stderr when it printed any).
        message: String,
    },
    /// A request to the server failed.
    #[error("MCP server {alias:?}: {message}")]
    Request {
        /// The server's alias.
        alias: String,
        /// What went wrong.
        message: String,
    },
    /// Binding or serving a listening socket failed.
    #[error("MCP server I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The MCP session ended with an error.
    #[error("MCP session failed: {0}")]
    Session(String),
}
