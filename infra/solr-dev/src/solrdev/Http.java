package solrdev;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A small HTTP/1.1 server on the JDK's sockets, bound to 127.0.0.1.
 *
 * <p>Not com.sun.net.httpserver: that server answers 400 itself, before any handler runs, when a
 * request line holds characters such as '&lt;' unencoded — and solr-client sends exactly that
 * (hl.simple.pre=&lt;em&gt;), which Solr's Jetty accepts. This one takes the request target as it
 * comes. It handles keep-alive, Content-Length and chunked bodies and Expect: 100-continue.
 */
final class Http {
  static final class Request {
    String method;
    String path;
    String rawQuery;
    final Map<String, String> headers = new HashMap<>();
    byte[] body;

    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  static final class Response {
    final int status;
    final String contentType;
    final byte[] body;

    Response(int status, String contentType, byte[] body) {
      this.status = status;
      this.contentType = contentType;
      this.body = body;
    }
  }

  interface Handler {
    Response handle(Request request);
  }

  private static final int MAX_LINE = 1 << 20;
  private final ServerSocket socket;
  private final Handler handler;
  // Cached threads: keep-alive connections each hold one while idle.
  private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "solr-dev-http");
    t.setDaemon(true);
    return t;
  });

  Http(int port, Handler handler) throws IOException {
    this.socket = new ServerSocket(port, 128, InetAddress.getLoopbackAddress());
    this.handler = handler;
  }

  void start() {
    Thread acceptor = new Thread(() -> {
      while (!socket.isClosed()) {
        try {
          Socket s = socket.accept();
          pool.execute(() -> serve(s));
        } catch (IOException e) {
          if (!socket.isClosed()) System.err.println("solr-dev: accept failed: " + e);
        }
      }
    }, "solr-dev-accept");
    acceptor.start(); // not a daemon: it keeps the process alive until SIGTERM

  }

  void stop() {
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    pool.shutdownNow();
  }

  private void serve(Socket s) {
    try (s) {
      s.setSoTimeout(300_000);
      s.setTcpNoDelay(true);
      InputStream in = new BufferedInputStream(s.getInputStream());
      OutputStream out = new BufferedOutputStream(s.getOutputStream());
      while (true) {
        String line = readLine(in);
        if (line == null) return;
        line = new String(line.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
        if (line.isEmpty()) continue;
        String[] parts = line.split(" ");
        if (parts.length != 3) {
          write(out, new Response(400, "text/plain", "Bad request line".getBytes(StandardCharsets.UTF_8)), false);
          return;
        }
        Request req = new Request();
        req.method = parts[0];
        String target = parts[1];
        int q = target.indexOf('?');
        req.path = q < 0 ? target : target.substring(0, q);
        req.rawQuery = q < 0 ? null : target.substring(q + 1);
        for (String h = readLine(in); h != null && !h.isEmpty(); h = readLine(in)) {
          int colon = h.indexOf(':');
          if (colon > 0) req.headers.put(h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
        }
        if ("100-continue".equalsIgnoreCase(req.header("Expect"))) {
          out.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
          out.flush();
        }
        req.body = readBody(in, req);
        String connection = req.header("Connection");
        boolean keepAlive = parts[2].equals("HTTP/1.1") ? !"close".equalsIgnoreCase(connection)
            : "keep-alive".equalsIgnoreCase(connection);
        write(out, handler.handle(req), keepAlive);
        if (!keepAlive) return;
      }
    } catch (SocketException | java.net.SocketTimeoutException e) {
      // the client went away or idled out
    } catch (IOException e) {
      System.err.println("solr-dev: connection failed: " + e);
    }
  }

  private static byte[] readBody(InputStream in, Request req) throws IOException {
    if ("chunked".equalsIgnoreCase(req.header("Transfer-Encoding"))) {
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      while (true) {
        String size = readLine(in);
        if (size == null) throw new IOException("truncated chunked body");
        int semi = size.indexOf(';');
        int n = Integer.parseInt((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
        if (n == 0) {
          for (String trailer = readLine(in); trailer != null && !trailer.isEmpty(); trailer = readLine(in)) {
            // trailers carry nothing solr-dev uses
          }
          return body.toByteArray();
        }
        body.write(in.readNBytes(n));
        readLine(in);
      }
    }
    String length = req.header("Content-Length");
    if (length == null) return new byte[0];
    byte[] body = in.readNBytes(Integer.parseInt(length.trim()));
    if (body.length < Integer.parseInt(length.trim())) throw new IOException("truncated body");
    return body;
  }

  /** A CRLF-terminated line as ISO-8859-1 (URL-encoded bytes are decoded later), or null at EOF. */
  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream(128);
    int b;
    while ((b = in.read()) != -1) {
      if (b == '\n') {
        byte[] bytes = line.toByteArray();
        int len = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
        return new String(bytes, 0, len, StandardCharsets.ISO_8859_1);
      }
      if (line.size() >= MAX_LINE) throw new IOException("line too long");
      line.write(b);
    }
    return line.size() == 0 ? null : line.toString(StandardCharsets.ISO_8859_1);
  }

  private static void write(OutputStream out, Response r, boolean keepAlive) throws IOException {
    String head = "HTTP/1.1 " + r.status + " " + reason(r.status) + "\r\n"
        + "Content-Type: " + r.contentType + "\r\n"
        + "Content-Length: " + r.body.length + "\r\n"
        + "Connection: " + (keepAlive ? "keep-alive" : "close") + "\r\n\r\n";
    out.write(head.getBytes(StandardCharsets.ISO_8859_1));
    out.write(r.body);
    out.flush();
  }

  private static String reason(int status) {
    switch (status) {
      case 200: return "OK";
      case 400: return "Bad Request";
      case 404: return "Not Found";
      case 409: return "Conflict";
      default: return status >= 500 ? "Server Error" : "Status";
    }
  }
}
