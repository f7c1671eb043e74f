package io.tidelog.broker.network;

import java.net.InetAddress;
import java.util.Optional;
import javax.net.ssl.SSLSession;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * What is known of a client connection when its first request arrives: its id, the listener it came
 * in on and that listener's security protocol, the client's address, and the TLS session once the
 * handshake is done (on SSL and SASL_SSL listeners).
 */
public record ClientChannel(
    String connectionId,
    ListenerName listener,
    SecurityProtocol protocol,
    InetAddress clientAddress,
    int clientPort,
    Optional<SSLSession> sslSession) {}
