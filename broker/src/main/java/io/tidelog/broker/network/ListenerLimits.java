package io.tidelog.broker.network;

/**
 * What one client may take of a listener, under Kafka's config names.
 *
 * @param requestMaxBytes {@code socket.request.max.bytes}: a larger frame closes the connection
 * @param maxConnections {@code max.connections}: beyond it a new connection is closed at once
 * @param maxConnectionsPerIp {@code max.connections.per.ip}: the same, per client address
 * @param connectionsMaxIdleMs {@code connections.max.idle.ms}: a connection that neither reads nor
 *     writes for this long is closed
 */
public record ListenerLimits(
    int requestMaxBytes, int maxConnections, int maxConnectionsPerIp, long connectionsMaxIdleMs) {}
