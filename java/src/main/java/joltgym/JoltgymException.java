package joltgym;

/**
 * A failed call into libjoltgym_marl: the C API's status ({@code
 * "JG_ERR_VALUE"}, ...) and its message, the words of the Python exception
 * the same mistake raises. Also thrown by the Java side for misuse it
 * detects itself (use after {@code close()}: {@code JG_ERR_STATE}; a second
 * thread inside an object: {@code JG_ERR_BUSY}).
 */
public class JoltgymException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  /** The C API's status codes, by value. */
  public static final int OK = 0;
  public static final int VALUE = 1;
  public static final int TYPE = 2;
  public static final int INDEX = 3;
  public static final int STATE = 4;
  public static final int FILE_NOT_FOUND = 5;
  public static final int MUJOCO = 6;
  public static final int OUT_OF_MEMORY = 7;
  public static final int HANDLE = 8;
  public static final int BUSY = 9;
  public static final int NULL = 10;
  public static final int INTERNAL = 11;
  private static final String[] NAMES = {"JG_OK", "JG_ERR_VALUE", "JG_ERR_TYPE", "JG_ERR_INDEX",
      "JG_ERR_STATE", "JG_ERR_FILE_NOT_FOUND", "JG_ERR_MUJOCO", "JG_ERR_OUT_OF_MEMORY",
      "JG_ERR_HANDLE", "JG_ERR_BUSY", "JG_ERR_NULL", "JG_ERR_INTERNAL"};

  private final int status;
  private final String detail;

  public JoltgymException(int status, String message) {
    super(name(status) + ": " + message);
    this.status = status;
    this.detail = message;
  }

  /** The status code (one of the constants above). */
  public int status() {
    return status;
  }

  /** The status's C name, "JG_ERR_VALUE", ... */
  public String statusName() {
    return name(status);
  }

  /** The C API's message alone (what {@code jg_last_error()} said). */
  public String detail() {
    return detail;
  }

  static String name(int status) {
    return status >= 0 && status < NAMES.length ? NAMES[status] : "status " + status;
  }

  /** Throws the C API's error for a failed status (read on the calling thread). */
  static void check(int status) {
    if (status != OK) {
      throw new JoltgymException(status, Native.jg_last_error());
    }
  }
}
